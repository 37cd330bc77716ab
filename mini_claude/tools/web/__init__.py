"""web_fetch: a web page read for the model (`fetch`), its address judged first (`address`), one
request to a checked address (`transfer`), and its body as text (`page`)."""
