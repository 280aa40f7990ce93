"""SQL for typed values out of JSON: a value of the wrong JSON type comes out NULL
(its violation is already recorded), never a failed cast that aborts a file."""


def json_int(expr: str) -> str:
    return f"CASE WHEN json_type({expr}) IN ('UBIGINT', 'BIGINT') THEN TRY_CAST({expr} AS BIGINT) END"


def json_bool(expr: str) -> str:
    return f"CASE WHEN json_type({expr}) = 'BOOLEAN' THEN TRY_CAST({expr} AS BOOLEAN) END"


def json_str(expr: str) -> str:
    return f"CASE WHEN json_type({expr}) = 'VARCHAR' THEN json_extract_string({expr}, '$') END"


def json_object(expr: str) -> str:
    return f"CASE WHEN json_type({expr}) = 'OBJECT' THEN {expr} END"


def json_list(expr: str, element: str) -> str:
    return f"CASE WHEN json_type({expr}) = 'ARRAY' THEN TRY_CAST({expr} AS {element}[]) END"


def json_ts(expr: str) -> str:
    return f"TRY_CAST(TRY_CAST({json_str(expr)} AS TIMESTAMPTZ) AS TIMESTAMP)"
