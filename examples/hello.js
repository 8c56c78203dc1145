// A first program for the sandbox: `npx ses-exec examples/hello.js`.
// It has no tools and no host access: plain JavaScript, console output and a final answer.
const primes = [];
for (let n = 2; primes.length < 10; n++) {
  if (primes.every((p) => n % p !== 0)) primes.push(n);
}
console.log("first primes:", primes);
console.info({ sum: primes.reduce((a, b) => a + b, 0) });
final_answer(`The 10th prime is ${primes.at(-1)}`);
