// Light and dark: three choices, "system" (follow the operating system's
// preference, the default), "light" and "dark", stored in this browser
// (localStorage "quiver.theme") and set as data-theme on <html>, where
// the style sheet's colours follow it (app.css, light-dark()).
// theme-boot.js applies the stored choice before the first paint.

const STORE = 'quiver.theme';
export const THEMES = ['system', 'light', 'dark'];

// theme is the current choice.
export function theme() {
  const t = document.documentElement.dataset.theme;
  return THEMES.includes(t) ? t : 'system';
}

// setTheme applies and stores a choice; anything else is ignored.
export function setTheme(choice) {
  if (!THEMES.includes(choice)) return;
  document.documentElement.dataset.theme = choice;
  try {
    if (choice === 'system') localStorage.removeItem(STORE);
    else localStorage.setItem(STORE, choice);
  } catch {
    // not stored: the choice lasts for this page
  }
}
