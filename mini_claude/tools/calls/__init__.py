"""What the registry does around each tool call: its input checked against the tool's schema
(input_schema.py), and a failure shortened for the user's screen (short_forms.py)."""
