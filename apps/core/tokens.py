def estimate_tokens(text: str) -> int:
    """bytes/4 of the UTF-8 text: an estimate a client can reproduce, never a tokenizer count."""
    return len(text.encode("utf-8")) // 4
