"""GPU tests of the Python SDK (skipped without torch and a GPU)."""
