"""Running a sweep: the scheduler and its admission control, the sweep that wires a run
together, the result store, the run manifest, progress and the role clients."""
