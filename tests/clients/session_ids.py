"""Session ids the client tests round-trip through the live server."""

# Every printable id, as an agent developer might pick one; the neighbour is the session the
# id's URL would reach if the client sent it unescaped.
SESSION_IDS = [
    ("slash", "team/a", "team"),
    ("slashes_around", "/a/", "a"),
    ("route_suffix", "x/turns/last", "x"),
    ("dot", ".", "x"),
    ("dot_dot", "..", "x"),
    ("dot_segments", "../x/./y", "x"),
    ("space", "s 1", "s"),
    ("surrounding_spaces", "  s  ", "s"),
    ("unicode", "ünïcødé 会话 💬", "x"),
    ("joined_emoji", "👩\u200d💻", "x"),
    ("percent", "50%", "50"),
    ("percent_escape", "a%2Fb", "a"),
    ("percent_hex", "%41%", "A"),
    ("query_and_fragment", "a?b=c#d", "a"),
    ("plus_and_ampersand", "a+b&c=d", "a"),
    ("backslash", "a\\b", "a"),
    ("longest", "é" * 200, "x"),
]
