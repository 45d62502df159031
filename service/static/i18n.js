// The page's strings in the reader's language: the server puts the catalogue
// (service/static/i18n/<lang>.json) in the page as JSON; t(key, vars) fills in
// {name} placeholders, picks plural forms by the language's rules, and writes
// numbers and dates the reader's way.

const data = JSON.parse(document.getElementById("strings").textContent);
export const lang = data.lang;
const plurals = new Intl.PluralRules(lang);
const numbers = new Intl.NumberFormat(lang);
const ENDONYMS = { en: "English", de: "Deutsch", ru: "Русский" };

export const number = (n) => numbers.format(n);

export function t(key, vars = {}) {
  let s = data.strings[key];
  if (s === undefined) {
    console.error(`no string ${key}`);
    return key;
  }
  if (typeof s === "object") s = s[plurals.select(vars.n ?? 0)] ?? s.other;
  return s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? (typeof vars[k] === "number" ? number(vars[k]) : String(vars[k])) : m));
}

// A sentence that starts with a word written in the middle of others ("the red robot").
export const capital = (s) => s.charAt(0).toLocaleUpperCase(lang) + s.slice(1);

// A day (YYYY-MM-DD) as the reader writes dates.
export function date(day) {
  return new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeZone: "UTC" }).format(new Date(`${day}T00:00:00Z`));
}

// The language switcher: each language named in itself (and marked so); a choice
// reloads the page in that language, and the server remembers it in a cookie.
export function switcher(select) {
  for (const code of data.languages) {
    const option = new Option(ENDONYMS[code] || code, code, false, code === lang);
    option.lang = code;
    select.append(option);
  }
  select.addEventListener("change", () => {
    const url = new URL(location.href);
    url.searchParams.set("lang", select.value);
    location.assign(url);
  });
}
