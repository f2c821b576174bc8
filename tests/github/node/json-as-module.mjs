// Module hook for parse.mjs: @actions/workflow-parser imports its JSON schemas without an import
// attribute (it is built for bundlers), which plain Node refuses; serve a `.json` file as a module
// whose default export is its content.
import { readFile } from "node:fs/promises";

export async function load(url, context, nextLoad) {
  if (url.startsWith("file:") && url.endsWith(".json")) {
    const text = await readFile(new URL(url), "utf8");
    return { format: "module", source: `export default ${text};`, shortCircuit: true };
  }
  return nextLoad(url, context);
}
