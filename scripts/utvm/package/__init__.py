"""package stage."""
