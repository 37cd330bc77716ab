"""Reading and writing user files safely: atomic replacement, bounded reads that refuse special
files, private modes whatever the umask, and the one text decoder."""
