// Drives every operation the Node SDK (@alicloud/mns) implements against an MNS endpoint, as a program would:
// node sdk_calls.js ENDPOINT ACCOUNT_ID KEY_ID SECRET NAME. Queues and topics are named after NAME. Prints one line a
// case, `case<TAB>OK` or `case<TAB>the reason it failed`; a case whose prerequisite failed fails too.
"use strict";
const assert = require("assert");
const MNS = require("@alicloud/mns");

async function main() {
  const [endpoint, account, keyId, secret, name] = process.argv.slice(2);
  const client = new MNS(account, { endpoint, accessKeyId: keyId, accessKeySecret: secret });
  const queue = `${name}-q`;
  const topic = `${name}-t`;
  const run = async (label, call) => {
    try {
      await call();
      console.log(`${label}\tOK`);
    } catch (err) {
      console.log(`${label}\t${err.name}: ${String(err.message).split("\n")[0]}`);
    }
  };
  const refused = async (call) => {
    try {
      await call();
    } catch (err) {
      return err.name;
    }
    return "no error";
  };
  let handle = "";
  let handles = [];

  // create, set and read back one attribute, list by prefix: the same three calls for a queue and a topic
  const controlCalls = async (kind, name, attribute, value) => {
    await run(`create${kind}`, async () => assert.strictEqual((await client[`create${kind}`](name)).code, 201));
    await run(`set${kind}Attributes`, async () => {
      await client[`set${kind}Attributes`](name, { [attribute]: value });
      assert.strictEqual((await client[`get${kind}Attributes`](name)).body[attribute], String(value));
    });
    await run(`list${kind}`, async () => {
      const listed = (await client[`list${kind}`](undefined, 10, name)).body;
      assert.deepStrictEqual([].concat(listed).map((r) => r[`${kind}URL`].split("/").pop()), [name]);
    });
  };

  await controlCalls("Queue", queue, "VisibilityTimeout", 40);
  await run("sendMessage", async () => assert.strictEqual((await client.sendMessage(queue, { MessageBody: "one" })).code, 201));
  await run("peekMessage", async () => assert.strictEqual((await client.peekMessage(queue)).body.MessageBody, "one"));
  await run("receiveMessage", async () => {
    const received = (await client.receiveMessage(queue, 1)).body;
    assert.strictEqual(received.MessageBody, "one");
    handle = received.ReceiptHandle;
  });
  await run("changeMessageVisibility", async () => {
    handle = (await client.changeMessageVisibility(queue, handle, 10)).body.ReceiptHandle;
    assert.ok(handle);
  });
  await run("deleteMessage", async () => assert.strictEqual((await client.deleteMessage(queue, handle)).code, 204));
  await run("batchSendMessage", async () => {
    const sent = await client.batchSendMessage(queue, [{ MessageBody: "a" }, { MessageBody: "b" }]);
    assert.strictEqual(sent.code, 201);
  });
  await run("batchPeekMessage", async () => assert.strictEqual((await client.batchPeekMessage(queue, 2)).body.length, 2));
  await run("batchReceiveMessage", async () => {
    handles = (await client.batchReceiveMessage(queue, 2, 1)).body.map((m) => m.ReceiptHandle);
    assert.strictEqual(handles.length, 2);
  });
  await run("batchDeleteMessage", async () => assert.strictEqual((await client.batchDeleteMessage(queue, handles)).code, 204));
  await run("receiveMessage.empty", async () =>
    assert.strictEqual(await refused(() => client.receiveMessage(queue, 1)), "MNSMessageNotExistError"));
  await run("wrongSecret", async () => {
    const stranger = new MNS(account, { endpoint, accessKeyId: keyId, accessKeySecret: `${secret}x` });
    assert.strictEqual(await refused(() => stranger.getQueueAttributes(queue)), "MNSSignatureDoesNotMatchError");
  });
  await run("deleteQueue", async () => {
    assert.strictEqual((await client.deleteQueue(queue)).code, 204);
    assert.strictEqual(await refused(() => client.getQueueAttributes(queue)), "MNSQueueNotExistError");
  });
  await controlCalls("Topic", topic, "MaximumMessageSize", 1024);
  await run("publishMessage", async () => assert.strictEqual((await client.publishMessage(topic, { MessageBody: "hi" })).code, 201));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
