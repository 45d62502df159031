// The package's build (`npm run build`, and so `npm pack`): dist/esm (ES modules) and
// dist/cjs (CommonJS, marked so by a package.json of its own), each with its declarations.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
rmSync("dist/esm", { recursive: true, force: true });
rmSync("dist/cjs", { recursive: true, force: true });
for (const project of ["tsconfig.json", "tsconfig.cjs.json"]) {
  execFileSync(process.execPath, [tsc, "-p", project], { stdio: "inherit" });
}
writeFileSync("dist/cjs/package.json", '{\n  "type": "commonjs"\n}\n');
