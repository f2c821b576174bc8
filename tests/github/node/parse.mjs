// GitHub's own parser (@actions/workflow-parser, the library behind the Actions language service)
// over workflow files and action.yml metadata files named on the command line. Prints one JSON
// array: [{"file", "kind": "workflow"|"action", "errors": [{"message", "line"}]}]. Used by
// tests/github/test_workflow_parser.py; installed by .ci/run (npm ci in this folder).
import { readFileSync } from "node:fs";
import { register } from "node:module";
import { basename } from "node:path";

register("./json-as-module.mjs", import.meta.url);
const { NoOperationTraceWriter, convertWorkflowTemplate, parseWorkflow } = await import("@actions/workflow-parser");
const { convertActionTemplate, parseAction } = await import("@actions/workflow-parser/actions/index");

const trace = new NoOperationTraceWriter();

function errorsOf(context) {
  return context.errors.getErrors().map((e) => ({
    message: e.message,
    line: e.range ? e.range.start.line : null,
  }));
}

async function check(file) {
  const content = readFileSync(file, "utf8");
  const isAction = /^action\.ya?ml$/.test(basename(file));
  const parsed = isAction ? parseAction({ name: file, content }, trace) : parseWorkflow({ name: file, content }, trace);
  if (parsed.value !== undefined) {
    // Conversion finds what the schema alone cannot (a job's `needs` naming no job, bad cron, ...).
    if (isAction) {
      convertActionTemplate(parsed.context, parsed.value);
    } else {
      await convertWorkflowTemplate(parsed.context, parsed.value);
    }
  } else if (parsed.context.errors.getErrors().length === 0) {
    parsed.context.error(file, "the parser returned no template");
  }
  return { file, kind: isAction ? "action" : "workflow", errors: errorsOf(parsed.context) };
}

const results = [];
for (const file of process.argv.slice(2)) {
  results.push(await check(file));
}
process.stdout.write(JSON.stringify(results) + "\n");
