"""What a ``models:`` entry declares, typed once: its keys (:mod:`.spec`), the outputs an entry can give
(:mod:`.outputs`), the backends and the implementation of each output with its version (:mod:`.backends`), and the
readings of one checkpoint paired for the pooling comparison (:mod:`.readings`)."""
