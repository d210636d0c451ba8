"""Judges that label holes 0-3 (an LLM through litellm, or the offline judge), cached by content."""
