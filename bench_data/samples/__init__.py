"""The built-in sample dataset ("sample"): TravelBench-shaped tasks and their tool cache."""

from pathlib import Path

SAMPLE_DIR = Path(__file__).resolve().parent / "travel_sample"
"""The built-in sample's directory (TravelBench-shaped; its format registers it as `sample`)."""
