"""Recognising credentials in text, so none is saved by accident into a memory."""
