"""Fitting on the visible sets: leave-one-company-out folds and intervals, the stage-2 model, the image thresholds."""
