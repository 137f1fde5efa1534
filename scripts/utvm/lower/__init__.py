"""lower stage."""
