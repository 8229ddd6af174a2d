"""What an assignment is worth: metrics, validity, the best-balance and weight bounds, load."""
