"""What derived labels and runs mean: agreement, calibration, significance, comparisons, lift, sensitivity, corrected estimates."""
