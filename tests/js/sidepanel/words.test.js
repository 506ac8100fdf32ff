// @ts-check
import test from "node:test";
import assert from "node:assert/strict";
import { failureWords, plainMessage, retryWords } from "../../../src/tabpilot/extension/sidepanel/words.js";

test("an API failure reads as words: no code prefix, no JSON body, no tab id", () => {
  const words = failureWords({ code: "api_error", message: 'API Error: 500 {"type":"error","error":{"type":"api_error","message":"Overloaded"}}' });
  assert.equal(words, "Your agent's model service failed: API Error: 500 Overloaded");
  assert.equal(plainMessage("not_found: tab 12 is closed"), "the tab is closed");
  assert.equal(failureWords({ code: "not_found", reason: "unknown_tab", message: "tab 12 is closed", hint: "open it from History" }), "That tab is closed: the tab is closed (open it from History)");
  assert.equal(failureWords({ code: "something_new", message: "" }), "Something went wrong");
  assert.equal(
    failureWords({ code: "user_aborted", reason: "user_declined", message: "user_aborted: the person declined (user_declined): submit a form" }),
    "You declined: submit a form",
  );
});

test("a retry says which attempt and when, then how many there were", () => {
  assert.equal(retryWords({ attempt: 1, max_retries: 2, delay_ms: 1500, status: 500 }, false), "Retrying (attempt 1 of 2, in 2 s): the model service answered with an error (HTTP 500)");
  assert.equal(retryWords({ attempt: 1, max_retries: 3, delay_ms: 100 }, true), "Retried 1 time (at most 3): the model service could not be reached");
});
