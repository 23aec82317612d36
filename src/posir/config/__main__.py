"""``python -m posir.config --write`` writes ``schemas/config.schema.yaml``; ``--check`` fails when it differs."""

from posir.config.schema_file import main

if __name__ == "__main__":
    raise SystemExit(main())
