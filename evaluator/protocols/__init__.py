"""Episode protocols: pure async functions from (task, context) to an EpisodeRecord."""
