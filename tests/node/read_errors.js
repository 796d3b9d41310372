// Reads errors through the Node SDK (@alicloud/mns) as a program would: for each queue name given on the command
// line, GetQueueAttributes against the endpoint (a stub answering one error body per queue name), printing one
// line `name<TAB>err.name` (the SDK names an error `MNS{Code}Error`) or `name<TAB>OK`.
"use strict";
const MNS = require("@alicloud/mns");

async function main() {
  const [endpoint, ...queues] = process.argv.slice(2);
  const client = new MNS("1000000000000001", { endpoint, accessKeyId: "KEY", accessKeySecret: "SECRET" });
  for (const queue of queues) {
    try {
      await client.getQueueAttributes(queue);
      console.log(`${queue}\tOK`);
    } catch (err) {
      console.log(`${queue}\t${err.name}`);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
