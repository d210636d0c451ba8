"""Versioned judge prompt templates (text files shipped as package data)."""
