import { type RefObject, useEffect } from "react";

function typingIn(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target.closest(".xterm")) return true;
  return ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** `/` focuses this element (the page's filter), unless the user is typing somewhere. */
export function useSlashFocus(ref: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey || typingIn(e.target)) return;
      if (document.querySelector("dialog[open]")) return;
      const el = ref.current;
      if (!el) return;
      e.preventDefault();
      el.focus();
      if (el instanceof HTMLInputElement) el.select();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [ref]);
}
