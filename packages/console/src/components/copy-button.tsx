import { useState } from "react";

/** Copies `text` to the clipboard and says so for a moment. */
export function CopyButton({
  text,
  label = "Copy",
  testId,
}: {
  text: string;
  label?: string;
  testId?: string;
}) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 1500);
  };
  return (
    <button type="button" onClick={copy} data-testid={testId} aria-live="polite">
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select and copy" : label}
    </button>
  );
}
