const warn = console.warn;

console.warn = (...args: unknown[]) => {
  const text = String(args[0]);
  if (!text.includes('test mode') && !text.includes('Azure Functions runtime')) warn(...args);
};

export const restoreWarnings = () => {
  console.warn = warn;
};
