"""Economy nets (placeholder while the Stellaris format is being written)."""


def economy_nets(con, resources=None, source=None):
    raise NotImplementedError
