"""The fix engine, the same for `fix --local` and for every CI platform.

- The attempt engine (`attempt.run_fix`): collect -> distill -> budget -> ask -> police/apply ->
  verify -> commit, retried up to the budget; its seams in `seams`, its summary in `summary`.
- The attempts' record (`ledger`): on git refs (`state`, `fix --local`) or on the forge's status
  marker (`marker`, CI); the budget over it in `budget`; input collection in `collect`.
- The CI cycle: `runner.run_cycle` opens it (`observe`), `decide` decides from what it observed,
  `execute` carries the decision out with one executor per outcome (`attempt_run`, `publish`,
  `verdicts`, `escalation`); `cycle` holds what they share; git on the runner in `gitops`.
- What a platform supplies (`platform`), the neutral forge (`forge`) and types (`types`).
"""
