"""Packaged YAML configs (``synthetic.yaml`` is the main job's default)."""
