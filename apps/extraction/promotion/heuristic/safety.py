"""The hard filters: instruction injection and secrets.

A turn that tries to instruct the system is dropped whole (two make the session adversarial);
a sentence that looks like it carries a secret is skipped, never redacted and kept. These run
before any scoring, so they live apart from the durability rules.
"""

from __future__ import annotations

import re

from apps.extraction.promotion.heuristic.levels import _I, _rx

# --- Injection --------------------------------------------------------------------------
_INJECTION = [
    _rx(
        r"\b(ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,40}"
        r"\b(instructions?|prompts?|rules|guidelines|directives)\b"
    ),
    _rx(r"\bsystem\s*(prompt|message|override|instructions?)\b"),
    _rx(r"\byou are now\b|\byou're now\b|\bfrom now on,? you\b|\byou will now\b"),
    _rx(r"\b(act|behave|respond) as (if|though|an? )\b|\bpretend (to be|you|that you)\b"),
    _rx(r"\brole-?\s?play\b|\blet'?s play a game\b|\bjailbreak\b|\bdeveloper mode\b"),
    _rx(r"\bas an ai\b|\blanguage model\b|\bdo anything now\b"),
    _rx(r"\bDAN\b", 0),
    _rx(
        r"\b(remember|memori[sz]e|store|save|persist|write down|note)\b[^.!?\n]{0,30}"
        r"\b(memory|memories|permanent(ly)?|forever|rule)\b"
    ),
    _rx(
        r"\byour (memory|memories|instructions|prompt|rules|guidelines)\b|\bmemory (system|bank)\b"
    ),
    _rx(r"\b(link|attach|cross-?link)\b[^.!?\n]{0,30}\barticles?\b"),
    _rx(
        r"\b(instructions?|message|note)s? (to|for) (the |this |any |all )?"
        r"(ai|assistant|model|llm|bot|agent)\b"
    ),
    _rx(r"\bnew (rules?|instructions?|directives?)\b"),
    _rx(r"<!--|-->|\b(memory|assistant|system)\.\w+\("),
    _rx(r"^\s*(system|assistant|developer)\s*:", _I | re.MULTILINE),
]
# "remember that …" / "store this" addressed to the system, at a sentence start (after an
# optional vocative such as "DAN,") or as a trailing ", save it".
_MEMORY_COMMAND = _rx(
    r"(^|[.!?]\s+|\n)\W*(\w+,\s*)?(please\s+)?(remember|memori[sz]e|store|save|note)"
    r"\s*(:|that\b|this\b|the following\b|my\b|it\b)"
    r"|,\s*(please\s+)?(save|store|remember|memori[sz]e) (it|this|that)\b"
)


def is_injection(text: str) -> bool:
    """True when ``text`` tries to instruct the system rather than state something."""
    return bool(_MEMORY_COMMAND.search(text)) or any(p.search(text) for p in _INJECTION)


# --- Secrets (spec "PII / secret stance": store a pointer, never the secret) --------------
_SECRET_PATTERNS = [
    _rx(r"\b(sk|pk|rk)[-_](live|test|proj)[-_]?[A-Za-z0-9_-]{8,}"),
    _rx(r"\bsk-[A-Za-z0-9_-]{16,}"),
    _rx(r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_\w{20,}"),
    _rx(r"\bxox[abprs]-[\w-]{10,}|\bglpat-[\w-]{16,}|\bwhsec_\w{12,}|\bAIza[\w-]{30,}"),
    _rx(r"\bAKIA[0-9A-Z]{16}\b", 0),
    _rx(r"\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{4,}"),
    _rx(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    _rx(
        r"\b(password|passwd|pwd|passphrase|passcode|pin|secret|token|api[_\s-]?key|"
        r"access[_\s-]?key|private[_\s-]?key|secret[_\s-]?key|signing[_\s-]?(secret|key)|"
        r"credentials?)\s*(is|was|=|:)\s*"
        r"(?!(in|stored|kept|under|at|located|managed|rotated|revoked|expired|invalid|missing|"
        r"wrong|required|needed|not|being|still|also|only|available|on|set|the same)\b)\S"
    ),
    _rx(r"\b[A-Z][A-Z0-9_]*(KEY|SECRET|TOKEN|PASSWORD|PASS|PWD)[A-Z0-9_]*\s*=\s*\S", 0),
    _rx(r"://[^/\s:@]+:[^/\s@]+@"),
    _rx(r"\b\d{3}-\d{2}-\d{4}\b"),
    _rx(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b", 0),
]
_OPAQUE_TOKEN = _rx(r"(?<![\w/.-])[A-Za-z0-9_+=-]{32,}(?![\w/.-])", 0)
_UUID = _rx(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_CARD = _rx(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def looks_secret(text: str) -> bool:
    """True when ``text`` seems to carry a credential, card number or similar."""
    if any(p.search(text) for p in _SECRET_PATTERNS):
        return True
    for token in _OPAQUE_TOKEN.findall(text):
        has_digit, has_alpha = any(c.isdigit() for c in token), any(c.isalpha() for c in token)
        if has_digit and has_alpha and not _UUID.match(token.lower()):
            return True
    for match in _CARD.findall(text):
        digits = re.sub(r"\D", "", match)
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return True
    return False
