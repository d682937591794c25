// Builds the native addon with the napi CLI: `flexiq.<platform>.node` plus the generated
// loader `native.cjs` and its types `native.d.ts`. CARGO_TARGET_DIR is honoured (cargo reads
// it). In an installed package (no Cargo.toml beside package.json) the prebuilt addon ships
// with the package and there is nothing to build.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'Cargo.toml'))) {
  console.log('flexiq: prebuilt addon, nothing to build');
  process.exit(0);
}
const args = ['build', '--platform', '--js', 'native.cjs', '--dts', 'native.d.ts', ...process.argv.slice(2)];
const cli = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js');
const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: 'inherit' });
if (r.error) {
  console.error(`flexiq: cannot run the napi CLI: ${r.error.message}`);
  process.exit(1);
}
process.exit(r.status ?? 1);
