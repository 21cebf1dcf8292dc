// `npm run build` (after tsc): the stores' numbered SQL migration files into dist/, beside the
// compiled adapters that read them (src/store/migrations.ts).
import { cpSync } from "node:fs";

for (const dir of ["src/store/sqlite/migrations", "src/store/postgres/migrations"]) {
  cpSync(dir, `dist/${dir}`, { recursive: true });
  console.log(`copied ${dir} to dist/${dir}`);
}
