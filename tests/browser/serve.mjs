// Serves dist/ as the browser tests do (support.mjs), in a process of its own, and prints the
// URL. The benchmark uses it so the server does not share an event loop with the browser driver
// (a real static server would not either); it also shows a build by hand:
//   node tests/browser/serve.mjs [PORT]
import { startServer } from './support.mjs';

const server = await startServer(Number(process.argv[2] ?? 0));
console.log(server.url);
