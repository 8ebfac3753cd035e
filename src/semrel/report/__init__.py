"""The HTML report and its plots."""
