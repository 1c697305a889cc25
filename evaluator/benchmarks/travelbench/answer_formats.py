"""The answer-format part of the built-in judge prompts (`$answer_format`, `$scale_note`).

The built-in rubric and meta prompts ask for what the run's parser reads: JSON with the English
labels (`options.judge_answers = "tolerant"`, the texts the prompts always had, so built-in
judgements keep their keys), or, when answers are read as the reference reads them
("reference"), the reference's XML layout with its five rating words 极差..优秀 and nothing
else in a rating, tags closed, plain text in the reasoning (the facts the reference's own
prompts state).
"""

from __future__ import annotations

import json

from evaluator.judges.parse import RATING_LABELS

from .judge_answers import RATING_WORDS

_WORDS = ", ".join(RATING_WORDS)
_MAPPING = ", ".join(f"{w} ({label})" for w, label in zip(RATING_WORDS, RATING_LABELS,
                                                          strict=True))
_PLAIN = ("Close every tag. Write the reasoning as plain text: no HTML or other tags (such as "
          "<b> or <br>) and no \"<\" or \"&\" characters. A rating is exactly one of the five "
          f"words {_MAPPING}, with nothing else in the element (no quotes, stars or "
          "punctuation).")


def rubric_format(dimensions: list[str], reference: bool) -> str:
    if not reference:
        example = json.dumps(
            {d: {"reasoning": f"<your reasoning on {d}>",
                 "rating": "<" + " | ".join(RATING_LABELS) + ">"} for d in dimensions},
            ensure_ascii=False)
        return ("Answer with one JSON object and nothing else, of this form:\n"
                f"{example}\n"
                'Each "rating" must be exactly one of: "Very Poor", "Poor", "Fair", "Good", '
                '"Excellent".')
    blocks = "\n".join(f"<{d}>\n<reasoning><!-- your reasoning on {d} --></reasoning>\n"
                       f"<rating><!-- one of {_WORDS} --></rating>\n</{d}>" for d in dimensions)
    return ("Answer in this XML layout and nothing else: one <response> element holding, for "
            "each dimension, an element of that name with a <reasoning> and then a <rating>. "
            f"{_PLAIN}\n<response>\n{blocks}\n</response>")


def meta_format(reference: bool) -> str:
    if not reference:
        return ("Answer with one JSON object and nothing else:\n"
                '{"reasoning": "<your audit, covering A to E>", "rating": "<one of Very Poor, '
                'Poor, Fair, Good, Excellent>"}')
    return ("Answer in this XML layout and nothing else: one <meta_evaluation> element with a "
            f"<reasoning> and then a <rating>. {_PLAIN}\n<meta_evaluation>\n"
            "<reasoning><!-- your audit, covering A to E --></reasoning>\n"
            f"<rating><!-- one of {_WORDS} --></rating>\n</meta_evaluation>")


def meta_scale(reference: bool) -> str:
    top = "优秀 (Excellent)" if reference else "Excellent"
    return (f"Rate the evaluation's reliability: {top} means it is sound and needs no "
            "correction; lower ratings mean the first judge was too generous or missed real "
            "problems, and the lower the rating, the more serious what it missed.")
