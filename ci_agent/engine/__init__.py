"""GitHub Actions mode of `ci-agent fix` (`--github`): orchestration in `run`, texts in `texts`,
git on the runner in `gitops`, where the failure is read from in `sources`, the attempt engine's
set-up in `engine`, and the step's outputs in `finish`."""
