"""From input rows to a checked group: validation, topics, offsets, Java regex patterns."""
