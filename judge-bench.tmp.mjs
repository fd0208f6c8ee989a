const { StagedVerdicts } = await import('/work/main/dist/src/rules/staged-verdict.js');
const { loadConfig } = await import('/work/main/dist/src/config/load.js').catch(() => ({}));
const { configSchema } = await import('/work/main/dist/src/config/schema.js');
const { execSync } = await import('node:child_process');
const fs = await import('node:fs');
const repo = process.argv[2];
const yaml = (await import('/work/main/node_modules/yaml/dist/index.js')).default;
const cfgText = fs.readFileSync('/work/main/templates/config.yaml', 'utf8');
const { preloadYaml, loadConfig: lc } = await import('/work/main/dist/src/config/load.js'); await preloadYaml(); const config = lc({ root: repo, home: '/tmp/jb-home', env: {} });
const sv = new StagedVerdicts({ root: repo, gitDir: repo + '/.git', commonDir: repo + '/.git', env: process.env });
for (let r = 0; r < 12; r++) {
  fs.writeFileSync(repo + '/d5/f5.txt', 'v' + r + Math.random());
  execSync('git add -A', { cwd: repo });
  await new Promise((res) => setTimeout(res, 50));
  const u0 = process.cpuUsage(); const t0 = Date.now();
  await sv.judgeAhead(config);
  const u = process.cpuUsage(u0);
  console.log('judgeAhead cpu ms', ((u.user + u.system) / 1000).toFixed(1), 'wall', Date.now() - t0);
}
