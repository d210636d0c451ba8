"""Judges that label holes 0-3 (an LLM through litellm, or the offline judge), cached by content.

base.py      the port: JudgeRequest, JudgeAnswer, Judge, TransientJudgeFailure, RequestRejected
registry.py  make_judge(model, **options), choose_model(model, api_base)
options.py   JudgeOptions: what a judge run is told, with its defaults
run/         one whole run, as api/judge.py drives it: plan, session, members, record, panel
             (a jury's members, the canaries), calibration; batch/ the same through batch APIs
requests.py  holes -> requests (texts, truncation, doc-level chunk views, no_text)
loop.py      the async labelling loop; calls.py (one group's calls, retries), claiming.py
             (claims: two judges never pay twice), throttle.py, budget.py, writer.py,
             provenance.py
llm.py       the litellm backend; prompt.py + prompts/ (templates), parse.py (grades)
cache.py     the content-keyed answer cache; tokens.py, redact.py
"""

if __name__ != "judgepool.judge":  # imported through the top-level link `judge/`
    raise ImportError(
        f"the code lives in judgepool.judge: write `import judgepool.judge`, "
        f"not `import {__name__}` "
        "(the folder judge/ at the repository's top is a link for reading, not a package)"
    )
