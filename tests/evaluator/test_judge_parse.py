import pytest

from evaluator.judges.parse import (
    JudgeParseError,
    parse_meta,
    parse_rubric,
    parse_window,
    rating_value,
)

DIMS = ["reasoning_planning", "summarization_extraction", "presentation"]


@pytest.mark.parametrize("text,value", [
    ("Very Poor", 1), ("poor", 2), ("Fair", 3), ("Average", 3), ("Good", 4),
    ("**Excellent**", 5), ("极差", 1), ("较差", 2), ("一般", 3), ("较好", 4), ("优秀", 5),
    ("4", 4), ("4/5", 4), ("Rating: Good.", 4), (3, 3),
    ("great", None), ("Good or Poor", None), ("7", None), (True, None), ("", None),
])
def test_rating_value(text, value):
    assert rating_value(text) == value


def test_json_in_fence_with_trailing_text():
    text = ('Here is my evaluation:\n```json\n{"reasoning_planning": {"reasoning": "ok", '
            '"rating": "Good"}, "summarization_extraction": {"reasoning": "r", "rating": '
            '"较差"}, "presentation": {"reasoning": "p", "rating": "Excellent"},}\n```\nThanks!')
    v = parse_rubric(text, DIMS)
    assert v.ratings == {"reasoning_planning": 4, "summarization_extraction": 2,
                         "presentation": 5}
    assert v.reasoning["reasoning_planning"] == "ok"


def test_json_nested_and_bare_ratings():
    text = 'x {"response": {"reasoning_planning": "Poor", "summarization_extraction": 3, ' \
           '"presentation": {"rating": "Very Poor"}}} y'
    assert parse_rubric(text, DIMS).ratings == {"reasoning_planning": 2,
                                               "summarization_extraction": 3,
                                               "presentation": 1}


def test_xml_fallback_with_sloppy_tags():
    text = """```xml
<response>
<reasoning_planning><reasoning>plan fine</reasoning><rating>较好</rating ></reasoning_planning >
<summarization_extraction>
<reasoning>made up a flight number</reasoning>
<rating>Very Poor</rating>
</summarization_extraction>
< presentation ><reasoning>clear</reasoning><rating>Poor
</response>
```"""
    v = parse_rubric(text, DIMS)
    assert v.ratings == {"reasoning_planning": 4, "summarization_extraction": 1,
                         "presentation": 2}
    assert v.reasoning["summarization_extraction"] == "made up a flight number"


def test_unrated_dimensions_are_left_out():
    # as in the reference: a dimension without a rating on the scale is left out of the verdict
    v = parse_rubric('{"reasoning_planning": {"rating": "Good"}}', DIMS)
    assert v.ratings == {"reasoning_planning": 4}
    assert v.unrated == {"summarization_extraction": "not rated", "presentation": "not rated"}
    v = parse_rubric('{"reasoning_planning": "Good", "summarization_extraction": "Good", '
                     '"presentation": "Superb"}', DIMS)
    assert v.ratings == {"reasoning_planning": 4, "summarization_extraction": 4}
    assert "Superb" in v.unrated["presentation"]
    xml = ("<response><reasoning_planning><reasoning>a</reasoning><rating>较好</rating>"
           "</reasoning_planning><presentation><reasoning>b</reasoning><rating>great</rating>"
           "</presentation></response>")
    v = parse_rubric(xml, DIMS)
    assert v.ratings == {"reasoning_planning": 4} and set(v.unrated) == set(DIMS[1:])


def test_no_rated_dimension_is_an_error():
    with pytest.raises(JudgeParseError, match="Superb"):
        parse_rubric('{"reasoning_planning": "Superb", "summarization_extraction": "?", '
                     '"presentation": "n/a"}', DIMS)
    with pytest.raises(JudgeParseError):
        parse_rubric("I think it was good overall.", DIMS)
    with pytest.raises(JudgeParseError):
        parse_rubric('{"overall": "Good"}', DIMS)


def test_meta_json_and_xml():
    assert parse_meta('{"reasoning": "sound", "rating": "Excellent"}').rating == 5
    xml = "<meta_evaluation><reasoning>missed a hallucination</reasoning>" \
          "<rating>一般</rating></meta_evaluation>"
    m = parse_meta(xml)
    assert (m.rating, m.reasoning) == (3, "missed a hallucination")
    with pytest.raises(JudgeParseError):
        parse_meta("no idea")


def test_window_formats():
    keys = ["rubric_0", "rubric_1"]
    v = parse_window('{"rubrics": [{"rubric_key": "rubric_1", "satisfied": true, '
                     '"overturned": false, "justification": "ordered"}, '
                     '{"rubric_key": "rubric_0", "satisfied": "false"}]} trailing', keys)
    assert v["rubric_1"].satisfied and not v["rubric_0"].satisfied
    assert v["rubric_1"].justification == "ordered"     # an "overturned" flag is ignored
    # the reference layout: a list with rubric_idx and meetExpectation
    ref = parse_window('[{"rubric_idx": "rubric_0", "meetExpectation": true}, '
                       '{"rubric_idx": "rubric_1", "meetExpectation": false}]', keys)
    assert ref["rubric_0"].satisfied and not ref["rubric_1"].satisfied
    # as in the reference, an answer may leave rubrics out: they keep their state
    part = parse_window('{"rubrics": [{"rubric_key": "rubric_0", "satisfied": true}]}', keys)
    assert set(part) == {"rubric_0"}
    # no usable item at all is unparseable (and so retried)
    with pytest.raises(JudgeParseError):
        parse_window('{"rubrics": [{"rubric_key": "rubric_9", "satisfied": true}]}', keys)
    with pytest.raises(JudgeParseError):
        parse_window('{"rubrics": [{"rubric_key": "rubric_0", "satisfied": "maybe"}]}', keys)
