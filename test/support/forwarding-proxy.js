// A reverse proxy in a process of its own, as production puts one in front of the API (the app speaks
// no TLS): node-http-proxy with xfwd, so each request reaches the API from the proxy's address with
// X-Forwarded-For = what the client sent, then the client's own address. Started by
// test/support/forwarding-proxy.ts: `node forwarding-proxy.js <target URL>`; prints its port.
const http = require('node:http');
const httpProxy = require('http-proxy');

const target = process.argv[2];
const proxy = httpProxy.createProxyServer({ target, xfwd: true });
proxy.on('error', (error, _request, response) => {
  if (response.headersSent) return response.destroy();
  response.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy error: ${error.message}`);
});
const server = http.createServer((request, response) => proxy.web(request, response));
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
