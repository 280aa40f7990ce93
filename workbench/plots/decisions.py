"""Decision quality (placeholder while the order-log formats are being written)."""


def decision_quality(con):
    raise NotImplementedError
