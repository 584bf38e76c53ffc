"""Stand-alone clients of the GPU Atlas API (standard library only)."""
