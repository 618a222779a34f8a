"""Two-stage precipitation nowcasting: an MSE estimator and a rectified flow (see ``system``)."""
