"""A tiny hand-made dataset in the LoCoMo shape (never the real, CC BY-NC, file)."""

import json

import pytest


def _turn(speaker, dia_id, text, **extra):
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


TINY = [
    {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("Ann", "D1:1", "I adopted a puppy named Rex"),
                _turn("Ben", "D1:2", "I bought a red kayak"),
                _turn("Ann", "D1:3", "My sister lives in Lisbon"),
            ],
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                _turn(
                    "Ben",
                    "D2:1",
                    "I started learning violin",
                    img_url=["https://example.invalid/v.jpg"],
                    blip_caption="a photo of a violin",
                ),
                _turn("Ann", "D2:2", "We visited the aquarium"),
            ],
            # A date key without a session, as in conv-26: must be ignored.
            "session_3_date_time": "9:00 am on 1 July, 2023",
        },
        "qa": [
            {"question": "What is the name of the puppy?", "evidence": ["D1:1"], "category": 4},
            {
                "question": "Where does the sister live?",
                "evidence": ["D1:3; D2:1"],
                "category": 1,
            },
            {"question": "When did they visit the aquarium?", "evidence": ["D:2:2"], "category": 2},
            {"question": "Which instrument?", "evidence": ["D2:01"], "category": 3},
            {"question": "Any hobbies?", "evidence": [], "category": 3},
            {"question": "What did Ann buy?", "evidence": ["D1:2"], "category": 5},
            {"question": "What is broken?", "evidence": ["D"], "category": 4},
            {
                "question": "What colour is the kayak?",
                "evidence": ["D1:2", "D9:9"],
                "category": 4,
                "answer": "red",
            },
        ],
        "observation": {},
        "session_summary": {},
        "event_summary": {},
    },
    {
        "sample_id": "conv-y",
        "conversation": {
            "speaker_a": "Cat",
            "speaker_b": "Dan",
            "session_1_date_time": "2:00 pm on 1 March, 2022",
            "session_1": [
                _turn("Cat", "D1:1", "I adopted a puppy named Max"),
                _turn("Dan", "D1:2", "Nice, I prefer cats"),
            ],
        },
        "qa": [
            {"question": "Which puppy is named Max?", "evidence": ["D1:1"], "category": 4},
        ],
    },
]


@pytest.fixture
def tiny_locomo(tmp_path):
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    return path
