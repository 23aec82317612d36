"""Pure, fast tests of single functions on hand-made inputs."""
