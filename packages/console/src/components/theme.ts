import { useEffect, useState } from "react";

export type ThemeChoice = "system" | "light" | "dark";

const KEY = "x-console.theme";
const EVENT = "x-console-theme";

export function loadTheme(): ThemeChoice {
  const v = localStorage.getItem(KEY);
  return v === "light" || v === "dark" ? v : "system";
}

export function applyTheme(choice: ThemeChoice): void {
  if (choice === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", choice);
}

export function setTheme(choice: ThemeChoice): void {
  if (choice === "system") localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, choice);
  applyTheme(choice);
  window.dispatchEvent(new Event(EVENT));
}

/** Changes whenever the colours in use change (a pick, or the system's scheme): for canvases. */
export function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((v) => v + 1);
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    media.addEventListener("change", bump);
    window.addEventListener(EVENT, bump);
    return () => {
      media.removeEventListener("change", bump);
      window.removeEventListener(EVENT, bump);
    };
  }, []);
  return version;
}

/** The value of a CSS variable of the page, e.g. `cssVar("--chart-1")`. */
export function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}
