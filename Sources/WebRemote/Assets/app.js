// playerd's web remote: plain ES2020, no framework, no build step.
//
// Data comes only from the JSON API (/api/...); changes arrive only over the WebSocket /api/events,
// whose frames name what changed ({"changed": ["player", ...]}): the page refetches exactly that. There
// is no polling: between events the elapsed time and the timers count on from the last status.
"use strict";

const $ = (selector) => document.querySelector(selector);

// ---------------------------------------------------------------------------------------------------
// The API

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Calls the JSON API; resolves with the decoded answer (null for 204), rejects with an ApiError. */
async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, "The player cannot be reached");
  }
  const text = response.status === 204 ? "" : await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const message = (data && data.error) || `${method} ${path} failed (HTTP ${response.status})`;
    if (response.status === 401) showLogin();
    throw new ApiError(response.status, message);
  }
  return data;
}

const enc = encodeURIComponent;

/** Reports a failed call: 401s already opened the login dialog; lost connections have their banner. */
function report(error) {
  if (error instanceof ApiError) {
    if (error.status === 401) return;
    if (error.status === 0 && !connected) return;
    toast(error.message);
  } else {
    console.error(error);
    toast(String(error && error.message ? error.message : error));
  }
}

/** Runs a user's action; a Status in the answer is shown at once (the event refetches it anyway). */
async function act(method, path, body) {
  try {
    const answer = await api(method, path, body);
    if (answer && typeof answer.state === "string") applyStatus(answer);
    return answer;
  } catch (error) {
    report(error);
    return undefined;
  }
}

let toastTimer = null;
function toast(message) {
  const element = $("#toast");
  element.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { element.textContent = ""; }, 5000);
}

// ---------------------------------------------------------------------------------------------------
// Small helpers

/** "m:ss", or "h:mm:ss" from an hour. */
function formatTime(seconds) {
  if (seconds == null || !Number.isFinite(seconds)) return "";
  const whole = Math.max(0, Math.floor(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** An element with a class and text. */
function el(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text != null) element.textContent = text;
  return element;
}

/** An inline icon from the page's sprite. */
function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const use = document.createElementNS("http://www.w3.org/2000/svg", "use");
  use.setAttribute("href", `#i-${name}`);
  svg.append(use);
  return svg;
}

/** A round icon button named by its label; `data` become data-* attributes (read by delegation). */
function iconButton(iconName, label, data) {
  const button = el("button", "icon-button");
  button.type = "button";
  button.setAttribute("aria-label", label);
  button.title = label;
  button.append(icon(iconName));
  Object.assign(button.dataset, data);
  return button;
}

/** Title and a grey line below it. */
function entryText(title, sub) {
  const text = el("span", "entry-text");
  text.append(el("span", "entry-title", title));
  if (sub) text.append(el("span", "entry-sub", sub));
  return text;
}

function songSubtitle(song) {
  return [song.artist, song.album].filter(Boolean).join(" — ");
}

/** Puts `items` in `list`, keeping the keyboard's focus on the same control when it is redrawn. */
function replaceList(list, items) {
  const focused = document.activeElement;
  let memory = null;
  if (focused && list.contains(focused)) {
    const item = focused.closest("li");
    memory = {
      action: focused.dataset.action,
      key: item ? item.dataset.key : null,
      index: item ? [...list.children].indexOf(item) : -1,
    };
  }
  list.replaceChildren(...items);
  if (memory) restoreFocus(list, memory);
}

// A moved song keeps the focus on the button pressed (or on its other Move button at an end); a
// removed one passes it to the song that took its place.
const OTHER_ACTION = { up: "down", down: "up" };

function restoreFocus(list, memory) {
  let item = memory.key != null ? list.querySelector(`li[data-key="${CSS.escape(memory.key)}"]`) : null;
  if (!item) item = list.children[Math.min(memory.index, list.children.length - 1)] || null;
  if (!item) return;
  const candidates = [memory.action, OTHER_ACTION[memory.action]].filter(Boolean);
  for (const action of candidates) {
    const target = item.querySelector(`[data-action="${CSS.escape(action)}"]`);
    if (target && !target.disabled) {
      target.focus();
      return;
    }
  }
  const fallback = item.querySelector("button:not(:disabled), input");
  if (fallback) fallback.focus();
}

/** Calls `fn` at most every `interval` ms, always with the latest arguments last. */
function throttle(fn, interval) {
  let last = 0;
  let timer = null;
  let pending = null;
  return (...args) => {
    pending = args;
    if (timer) return;
    const wait = Math.max(0, last + interval - Date.now());
    timer = setTimeout(() => {
      timer = null;
      last = Date.now();
      fn(...pending);
    }, wait);
  };
}

/**
 * Makes a refresher: calling it loads now, or, when a load is running, once more after it (so the
 * newest change is never answered by an older response, and a burst of events costs two loads).
 */
function refresher(load) {
  let running = null;
  let again = false;
  return function refresh() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await load();
        } catch (error) {
          report(error);
        }
      } while (again);
      running = null;
    })();
    return running;
  };
}

// ---------------------------------------------------------------------------------------------------
// Status: now playing, transport, volume, modes, timers

let status = null;
let statusAt = 0; // performance.now() when `status` arrived: the local clock counts from here
let seeking = false; // the user holds the seek bar: it shows the target, not the position
let volumeBusyUntil = 0; // the user moves the volume: the status does not move the slider back
let lastPlayerError = null; // shown once as a toast, not again with every status

function applyStatus(next) {
  status = next;
  statusAt = performance.now();
  renderNowPlaying();
  renderTransport();
  renderVolume();
  renderModes();
  markCurrentInQueue();
  redrawClock();
}

function currentElapsed() {
  if (!status || status.elapsed == null) return null;
  let elapsed = status.elapsed;
  if (status.state === "play") elapsed += (performance.now() - statusAt) / 1000;
  if (status.duration != null) elapsed = Math.min(elapsed, status.duration);
  return elapsed;
}

function renderNowPlaying() {
  const song = status && status.current;
  $("#now-title").textContent = song ? song.title : "Nothing playing";
  $("#now-artist").textContent = song && song.artist ? song.artist : "";
  $("#now-album").textContent = song && song.album ? song.album : "";
  document.title = song ? `${song.title} — playerd` : "playerd";
  setCover(song);
  $("#now-audio").textContent = song && status.state !== "stop" ? audioText(status) : "";
  if (status && status.error && status.error !== lastPlayerError) toast(status.error);
  lastPlayerError = status ? status.error : null;
  $("#library-updating").hidden = !(status && status.updating);
  const duration = status ? status.duration : null;
  $("#duration").textContent = duration != null ? formatTime(duration) : "";
  const seek = $("#seek");
  seek.disabled = duration == null || !(duration > 0) || !status || status.state === "stop";
  seek.max = duration != null && duration > 0 ? String(duration) : "0";
}

/** "44.1 kHz · 16 bit · 320 kbps" from Status's audio ("rate:bits:channels") and bitrate. */
function audioText(s) {
  const parts = [];
  const [rate, bits] = (s.audio || "").split(":");
  if (Number(rate) > 0) parts.push(`${Number(rate) / 1000} kHz`);
  if (bits === "f") parts.push("float");
  else if (Number(bits) > 0) parts.push(`${bits} bit`);
  if (s.bitrate) parts.push(`${s.bitrate} kbps`);
  return parts.join(" · ");
}

const PLACEHOLDER_COVER = "/icon.svg";

function setCover(song) {
  const cover = $("#cover");
  const wanted = (song && song.cover) || PLACEHOLDER_COVER;
  cover.alt = song ? `Cover of ${song.album || song.title}` : "No cover";
  if (cover.dataset.src !== wanted) {
    cover.dataset.src = wanted; // the URL asked for; `src` becomes the placeholder when it fails
    cover.src = wanted;
  }
}

function onCoverError() {
  const cover = $("#cover");
  if (!cover.src.endsWith(PLACEHOLDER_COVER)) cover.src = PLACEHOLDER_COVER;
}

function renderTransport() {
  const playing = status && status.state === "play";
  const button = $("#play-pause");
  const label = playing ? "Pause" : "Play";
  if (button.getAttribute("aria-label") !== label) {
    button.setAttribute("aria-label", label);
    button.title = label;
    button.querySelector("use").setAttribute("href", playing ? "#i-pause" : "#i-play");
  }
}

function renderVolume() {
  const slider = $("#volume");
  const volume = status ? status.volume : null;
  slider.disabled = volume == null;
  if (volume == null) {
    $("#volume-value").textContent = "";
    return;
  }
  if (performance.now() < volumeBusyUntil) return;
  slider.value = String(volume);
  $("#volume-value").textContent = `${volume}%`;
}

function renderModes() {
  const s = status || { repeat: false, random: false, single: "0", consume: false };
  $("#repeat").setAttribute("aria-pressed", String(Boolean(s.repeat)));
  $("#random").setAttribute("aria-pressed", String(Boolean(s.random)));
  $("#consume").setAttribute("aria-pressed", String(Boolean(s.consume)));
  const single = $("#single");
  single.setAttribute("aria-pressed", String(s.single !== "0"));
  single.title = s.single === "oneshot" ? "Single: once" : "Single";
}

// The clock: redraws elapsed and the timers from the last status and the time since. It runs only
// while something counts, and wakes when the next whole second is due.
let clockTimer = null;

function redrawClock() {
  clearTimeout(clockTimer);
  clockTimer = null;
  const elapsed = currentElapsed();
  if (!seeking) {
    $("#elapsed").textContent = elapsed != null ? formatTime(elapsed) : "0:00";
    const seek = $("#seek");
    seek.value = String(elapsed != null ? elapsed : 0);
    seek.setAttribute("aria-valuetext", seekText(elapsed));
  }
  renderTimerStatus();
  if (document.hidden) return;
  const counting = status && (status.state === "play" || typeof status.sleepTimer === "number" || status.resumeIn != null);
  if (!counting) return;
  let delay = 1000;
  if (status.state === "play" && elapsed != null) delay = 1000 - ((elapsed * 1000) % 1000) + 20;
  clockTimer = setTimeout(redrawClock, delay);
}

function seekText(seconds) {
  const duration = status ? status.duration : null;
  if (seconds == null) return "0:00";
  return duration != null ? `${formatTime(seconds)} of ${formatTime(duration)}` : formatTime(seconds);
}

function secondsLeft(value) {
  return Math.max(0, value - (performance.now() - statusAt) / 1000);
}

function renderTimerStatus() {
  const parts = [];
  if (status && status.sleepTimer === "end") parts.push("Sleeps at the end of the song");
  else if (status && typeof status.sleepTimer === "number") parts.push(`Sleeps in ${formatTime(secondsLeft(status.sleepTimer))}`);
  if (status && status.resumeIn != null) parts.push(`Resumes in ${formatTime(secondsLeft(status.resumeIn))}`);
  const text = parts.length ? parts.join(" · ") : "No timer";
  const element = $("#timer-status");
  if (element.textContent !== text) element.textContent = text;
}

function playPauseAction() {
  if (!status || status.state === "stop") return "play";
  return status.state === "play" ? "pause" : "resume";
}

function bindTransport() {
  $("#play-pause").addEventListener("click", () => act("POST", "/api/player", { action: playPauseAction() }));
  $("#previous").addEventListener("click", () => act("POST", "/api/player", { action: "previous" }));
  $("#next").addEventListener("click", () => act("POST", "/api/player", { action: "next" }));
  $("#stop").addEventListener("click", () => act("POST", "/api/player", { action: "stop" }));

  for (const name of ["repeat", "random", "consume"]) {
    $(`#${name}`).addEventListener("click", () => act("PUT", "/api/options", { [name]: !(status && status[name]) }));
  }
  $("#single").addEventListener("click", () => act("PUT", "/api/options", { single: status && status.single !== "0" ? "0" : "1" }));
}

function bindSeek() {
  const seek = $("#seek");
  // While dragging, `input` shows the target; `change` (release, or a key) seeks there.
  seek.addEventListener("input", () => {
    seeking = true;
    const target = Number(seek.value);
    $("#elapsed").textContent = formatTime(target);
    seek.setAttribute("aria-valuetext", seekText(target));
  });
  let pending = false;
  seek.addEventListener("change", async () => {
    pending = true;
    await act("POST", "/api/seek", { seconds: Number(seek.value) });
    pending = false;
    seeking = false;
    redrawClock();
  });
  // Let go where it started: no `change` comes, so the bar follows the song again by itself. (Later
  // than `change`, which comes with the release when the value moved.)
  const release = () => setTimeout(() => {
    if (seeking && !pending) {
      seeking = false;
      redrawClock();
    }
  }, 0);
  seek.addEventListener("pointerup", release);
  seek.addEventListener("blur", release);
}

function bindVolume() {
  const slider = $("#volume");
  const send = throttle((volume) => act("PUT", "/api/volume", { volume }), 100);
  slider.addEventListener("input", () => {
    volumeBusyUntil = performance.now() + 1000;
    $("#volume-value").textContent = `${slider.value}%`;
    send(Number(slider.value));
  });
}

// ---------------------------------------------------------------------------------------------------
// The queue

let queue = { version: -1, songs: [] };

const refreshQueue = refresher(async () => {
  renderQueue(await api("GET", "/api/queue"));
});

function renderQueue(answer) {
  queue = answer;
  const items = answer.songs.map(queueItem);
  replaceList($("#queue"), items);
  $("#queue-empty").hidden = answer.songs.length > 0;
  $("#queue-clear").disabled = answer.songs.length === 0;
  const total = answer.songs.reduce((sum, song) => sum + (song.duration || 0), 0);
  const count = answer.songs.length;
  $("#queue-summary").textContent = count ? `${count} ${count === 1 ? "song" : "songs"}, ${formatTime(total)}` : "";
  markCurrentInQueue();
}

function queueItem(song, index) {
  const item = el("li", "queue-item");
  item.dataset.id = String(song.id);
  item.dataset.position = String(song.position != null ? song.position : index);
  item.dataset.key = String(song.id);
  item.draggable = true;

  const grip = icon("grip");
  grip.classList.add("grip");
  const position = el("span", "position", String(index + 1));
  position.setAttribute("aria-hidden", "true");

  const play = el("button", "entry-main");
  play.type = "button";
  play.setAttribute("aria-label", `Play ${song.title}`);
  play.dataset.action = "play";
  play.append(entryText(song.title, songSubtitle(song)));

  const time = el("span", "entry-time", formatTime(song.duration));
  const last = queue.songs.length - 1;
  const up = iconButton("up", `Move ${song.title} up`, { action: "up" });
  up.disabled = index === 0;
  const down = iconButton("down", `Move ${song.title} down`, { action: "down" });
  down.disabled = index === last;
  const remove = iconButton("remove", `Remove ${song.title}`, { action: "remove" });

  item.append(grip, position, play, time, up, down, remove);
  return item;
}

let shownCurrentOnce = false; // the page opened on a long queue scrolls to its current song, once

function markCurrentInQueue() {
  const currentId = status && status.id != null ? String(status.id) : null;
  for (const item of document.querySelectorAll("#queue > li")) {
    if (item.dataset.id !== currentId) {
      item.removeAttribute("aria-current");
      continue;
    }
    item.setAttribute("aria-current", "true");
    if (!shownCurrentOnce) {
      shownCurrentOnce = true;
      item.scrollIntoView({ block: "nearest" });
    }
  }
}

function moveInQueue(id, to) {
  return act("POST", `/api/queue/${enc(id)}/move`, { to });
}

function onQueueClick(event) {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  const item = button.closest("li.queue-item");
  const id = Number(item.dataset.id);
  const position = Number(item.dataset.position);
  switch (button.dataset.action) {
    case "play": act("POST", "/api/player", { action: "play", id }); break;
    case "remove": act("DELETE", `/api/queue/${enc(id)}`); break;
    case "up": moveInQueue(id, position - 1); break;
    case "down": moveInQueue(id, position + 1); break;
  }
}

// Drag and drop (HTML5, desktop). The dragged id is kept here as well as in dataTransfer, since some
// browsers hide dataTransfer's data until the drop.
let dragId = null;

function clearDropMarks() {
  for (const item of document.querySelectorAll("#queue .drop-before, #queue .drop-after")) {
    item.classList.remove("drop-before", "drop-after");
  }
}

/** Whether the pointer is in the lower half of `item`: drop after it rather than before. */
function dropsAfter(item, event) {
  const box = item.getBoundingClientRect();
  return event.clientY > box.top + box.height / 2;
}

function bindQueueDragAndDrop(list) {
  list.addEventListener("dragstart", (event) => {
    const item = event.target.closest && event.target.closest("li.queue-item");
    if (!item) return;
    dragId = item.dataset.id;
    item.classList.add("dragging");
    if (event.dataTransfer) {
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", dragId);
    }
  });
  list.addEventListener("dragover", (event) => {
    const item = event.target.closest && event.target.closest("li.queue-item");
    if (!item || dragId == null) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = "move";
    clearDropMarks();
    item.classList.add(dropsAfter(item, event) ? "drop-after" : "drop-before");
  });
  list.addEventListener("dragleave", (event) => {
    if (!list.contains(event.relatedTarget)) clearDropMarks();
  });
  list.addEventListener("drop", (event) => {
    const item = event.target.closest && event.target.closest("li.queue-item");
    const id = dragId != null ? dragId : event.dataTransfer && event.dataTransfer.getData("text/plain");
    clearDropMarks();
    if (!item || !id) return;
    event.preventDefault();
    const from = Number(list.querySelector(`li[data-id="${CSS.escape(id)}"]`)?.dataset.position);
    // The gap the song is dropped into, counted before it leaves its place; once it has left, the
    // songs after it move up by one.
    let gap = Number(item.dataset.position) + (dropsAfter(item, event) ? 1 : 0);
    if (from < gap) gap -= 1;
    if (Number.isFinite(from) && gap !== from) moveInQueue(Number(id), gap);
  });
  list.addEventListener("dragend", () => {
    dragId = null;
    clearDropMarks();
    for (const item of list.querySelectorAll(".dragging")) item.classList.remove("dragging");
  });
}

function bindQueue() {
  const list = $("#queue");
  list.addEventListener("click", onQueueClick);
  bindQueueDragAndDrop(list);
  $("#queue-clear").addEventListener("click", () => act("DELETE", "/api/queue"));
  $("#queue-save-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("#queue-save-name");
    const name = input.value.trim();
    if (!name) return;
    try {
      await api("POST", "/api/queue/save", { name });
      input.value = "";
      toast(`Saved the queue as “${name}”`);
    } catch (error) {
      report(error);
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// Songs in lists (library, search): Add and Play

/** A song's row: its title and subtitle, "Add TITLE" and "Play TITLE". */
function songItem(song) {
  const item = el("li", "song-item");
  item.dataset.key = `song:${song.uri}`;
  const main = el("div", "entry-main");
  main.append(icon("note"), entryText(song.title, songSubtitle(song)));
  const time = el("span", "entry-time", formatTime(song.duration));
  item.append(main, time, ...addPlayButtons(song.title, { uri: song.uri || "" }));
  return item;
}

function addPlayButtons(name, data) {
  return [
    iconButton("add", `Add ${name}`, { ...data, action: "add" }),
    iconButton("play", `Play ${name}`, { ...data, action: "play" }),
  ];
}

/** Adds a song or a folder; `play` plays the first song added. */
async function addUri(uri, play) {
  const answer = await act("POST", "/api/queue", play ? { uri, play: true } : { uri });
  if (answer && !play) toast(`Added ${answer.added} ${answer.added === 1 ? "song" : "songs"}`);
}

/** Adds an album's songs in order; `play` plays the first of them. */
async function addAlbum(artist, album, play) {
  try {
    const answer = await api("GET", `/api/library/songs?artist=${enc(artist)}&album=${enc(album)}`);
    let added = 0;
    for (const song of answer.songs) {
      if (!song.uri) continue;
      const body = play && added === 0 ? { uri: song.uri, play: true } : { uri: song.uri };
      const result = await api("POST", "/api/queue", body);
      added += result ? result.added : 0;
    }
    if (!play) toast(`Added ${added} ${added === 1 ? "song" : "songs"}`);
  } catch (error) {
    report(error);
  }
}

/** Appends a stored playlist (its load); `play` plays its first song, at the queue's old end. */
async function addPlaylist(name, play) {
  try {
    const before = await api("GET", "/api/status");
    await api("POST", `/api/playlists/${enc(name)}/load`);
    if (play) await act("POST", "/api/player", { action: "play", position: before.queueLength });
    else toast(`Added “${name}”`);
  } catch (error) {
    report(error);
  }
}

/** Handles Add/Play in a list of songs (delegated from the list). */
function onSongListClick(event) {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  const { action, uri } = button.dataset;
  if ((action === "add" || action === "play") && uri) addUri(uri, action === "play");
}

// ---------------------------------------------------------------------------------------------------
// The library: folders, or artist → album → song

const library = { mode: "folders", path: "", artist: null, album: null };

const refreshLibrary = refresher(async () => {
  if (library.mode === "folders") await showFolder();
  else if (library.artist == null) await showArtists();
  else if (library.album == null) await showAlbums();
  else await showAlbumSongs();
  $("#library-back").disabled = library.mode === "folders" ? library.path === "" : library.artist == null;
});

function renderLibrary(heading, items) {
  $("#library-heading").textContent = heading;
  replaceList($("#library"), items);
  $("#library-empty").hidden = items.length > 0;
}

/** An entry that opens (a folder, an artist, an album), with Add/Play when it has them. */
function openItem(iconName, name, data, withAddPlay) {
  const item = el("li", "open-item");
  item.dataset.key = `${data.kind}:${data.value}`;
  const open = el("button", "entry-main");
  open.type = "button";
  open.setAttribute("aria-label", `Open ${name}`);
  Object.assign(open.dataset, data, { action: "open" });
  open.append(icon(iconName), entryText(name));
  item.append(open);
  open.append(icon("open"));
  if (withAddPlay) item.append(...addPlayButtons(name, data));
  return item;
}

async function showFolder() {
  const answer = await api("GET", `/api/library/folder?path=${enc(library.path)}`);
  const items = [
    ...answer.folders.map((folder) => openItem("folder", folder.name, { kind: "folder", value: folder.path }, true)),
    ...answer.songs.map(songItem),
    ...answer.playlists.map((playlist) => {
      const item = el("li", "playlist-item");
      item.dataset.key = `playlist:${playlist.name}`;
      const main = el("div", "entry-main");
      main.append(icon("playlists"), entryText(playlist.name, "Playlist"));
      item.append(main, ...addPlayButtons(playlist.name, { kind: "playlist", value: playlist.name }));
      return item;
    }),
  ];
  renderLibrary(library.path === "" ? "Music" : library.path, items);
}

async function showArtists() {
  const answer = await api("GET", "/api/library/artists");
  renderLibrary("Artists", answer.artists.map((artist) =>
    openItem("person", artist || "Unknown artist", { kind: "artist", value: artist }, false)));
}

async function showAlbums() {
  const answer = await api("GET", `/api/library/albums?artist=${enc(library.artist)}`);
  renderLibrary(library.artist || "Unknown artist", answer.albums.map((album) =>
    openItem("album", album || "Unknown album", { kind: "album", value: album }, true)));
}

async function showAlbumSongs() {
  const answer = await api("GET", `/api/library/songs?artist=${enc(library.artist)}&album=${enc(library.album)}`);
  const heading = `${library.album || "Unknown album"} — ${library.artist || "Unknown artist"}`;
  renderLibrary(heading, answer.songs.map(songItem));
}

/** Shows a new level of the library and takes the keyboard's focus to its heading. */
async function navigateLibrary(change) {
  Object.assign(library, change);
  await refreshLibrary();
  $("#library-heading").focus();
}

function onLibraryClick(event) {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  const { action, kind, value } = button.dataset;
  if (action === "open") {
    if (kind === "folder") navigateLibrary({ path: value });
    else if (kind === "artist") navigateLibrary({ artist: value, album: null });
    else if (kind === "album") navigateLibrary({ album: value });
    return;
  }
  if (kind === "album") addAlbum(library.artist, value, action === "play");
  else if (kind === "folder") addUri(value, action === "play");
  else if (kind === "playlist") addPlaylist(value, action === "play");
  else onSongListClick(event);
}

function libraryBack() {
  if (library.mode === "folders") {
    const cut = library.path.lastIndexOf("/");
    navigateLibrary({ path: cut < 0 ? "" : library.path.slice(0, cut) });
  } else if (library.album != null) {
    navigateLibrary({ album: null });
  } else {
    navigateLibrary({ artist: null });
  }
}

function setLibraryMode(mode) {
  library.mode = mode;
  $("#library-mode-folders").setAttribute("aria-pressed", String(mode === "folders"));
  $("#library-mode-artists").setAttribute("aria-pressed", String(mode === "artists"));
  refreshLibrary();
}

function bindLibrary() {
  $("#library").addEventListener("click", onLibraryClick);
  $("#library-back").addEventListener("click", libraryBack);
  $("#library-mode-folders").addEventListener("click", () => setLibraryMode("folders"));
  $("#library-mode-artists").addEventListener("click", () => setLibraryMode("artists"));
}

// ---------------------------------------------------------------------------------------------------
// Search (debounced; an answer to an older query is dropped)

let searchTimer = null;
let searchSerial = 0;

async function runSearch() {
  const query = $("#search-input").value.trim();
  const serial = ++searchSerial;
  if (!query) {
    replaceList($("#search-results"), []);
    $("#search-summary").textContent = "";
    return;
  }
  try {
    const answer = await api("GET", `/api/search?q=${enc(query)}`);
    if (serial !== searchSerial) return;
    replaceList($("#search-results"), answer.songs.map(songItem));
    const count = answer.songs.length;
    $("#search-summary").textContent = count === 0 ? "No songs found" : `${count} ${count === 1 ? "song" : "songs"}`;
  } catch (error) {
    report(error);
  }
}

function bindSearch() {
  const input = $("#search-input");
  input.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, 250);
  });
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(searchTimer);
    runSearch();
  });
  $("#search-results").addEventListener("click", onSongListClick);
}

// ---------------------------------------------------------------------------------------------------
// Stored playlists

const refreshPlaylists = refresher(async () => {
  const answer = await api("GET", "/api/playlists");
  const items = answer.playlists.map((playlist) => {
    const item = el("li", "playlist-item");
    item.dataset.key = playlist.name;
    item.dataset.name = playlist.name;
    const main = el("div", "entry-main");
    main.append(icon("playlists"), entryText(playlist.name, formatModified(playlist.modified)));
    item.append(
      main,
      iconButton("add", `Load ${playlist.name}`, { action: "load" }),
      iconButton("remove", `Delete ${playlist.name}`, { action: "delete" }),
    );
    return item;
  });
  replaceList($("#playlists"), items);
  $("#playlists-empty").hidden = items.length > 0;
});

function formatModified(value) {
  const date = value ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) return "";
  return `Saved ${date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}`;
}

async function onPlaylistsClick(event) {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  const name = button.closest("li").dataset.name;
  if (button.dataset.action === "load") {
    const done = await act("POST", `/api/playlists/${enc(name)}/load`);
    if (done !== undefined) toast(`Loaded “${name}”`);
  } else if (button.dataset.action === "delete") {
    act("DELETE", `/api/playlists/${enc(name)}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Outputs

const refreshOutputs = refresher(async () => {
  const answer = await api("GET", "/api/outputs");
  const items = answer.outputs.map((output) => {
    const item = el("li", "output-item");
    item.dataset.key = String(output.id);
    const label = el("label", "entry-title", output.name);
    const box = el("input");
    box.type = "checkbox";
    box.id = `output-${output.id}`;
    box.setAttribute("role", "switch");
    box.checked = output.enabled;
    box.setAttribute("aria-checked", String(output.enabled));
    box.dataset.id = String(output.id);
    box.dataset.action = "switch";
    label.htmlFor = box.id;
    item.append(box, label, el("span", "entry-sub", output.plugin));
    return item;
  });
  replaceList($("#outputs"), items);
});

async function onOutputChange(event) {
  const box = event.target.closest("input[data-action=switch]");
  if (!box) return;
  box.setAttribute("aria-checked", String(box.checked));
  const done = await act("PUT", `/api/outputs/${enc(box.dataset.id)}`, { enabled: box.checked });
  if (done === undefined) refreshOutputs(); // refused: show the output as it really is
}

// ---------------------------------------------------------------------------------------------------
// Timers

function minutesFrom(selector) {
  const minutes = Number($(selector).value);
  if (!Number.isFinite(minutes) || minutes <= 0) {
    toast("Enter a number of minutes above zero");
    return null;
  }
  return minutes;
}

function bindTimers() {
  $("#sleep-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const minutes = minutesFrom("#sleep-minutes");
    if (minutes != null) act("PUT", "/api/timers", { sleep: Math.round(minutes * 60) });
  });
  $("#sleep-end").addEventListener("click", () => act("PUT", "/api/timers", { sleep: "end" }));
  $("#sleep-off").addEventListener("click", () => act("PUT", "/api/timers", { sleep: "off" }));
  $("#pause-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const minutes = minutesFrom("#pause-minutes");
    if (minutes != null) act("PUT", "/api/timers", { pauseFor: Math.round(minutes * 60) });
  });
}

// ---------------------------------------------------------------------------------------------------
// Tabs (the ARIA tabs pattern: arrows, Home and End move between tabs)

function tabs() {
  return [...document.querySelectorAll('[role="tab"]')];
}

function selectTab(tab, focus) {
  for (const other of tabs()) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
    document.getElementById(other.getAttribute("aria-controls")).hidden = !selected;
  }
  document.querySelector(".panel-area").scrollTop = 0;
  if (focus) tab.focus();
  if (tab.id === "tab-search" && focus !== "keep") $("#search-input").focus({ preventScroll: true });
}

function bindTabs() {
  const list = $('[role="tablist"]');
  list.addEventListener("click", (event) => {
    const tab = event.target.closest('[role="tab"]');
    if (tab) selectTab(tab, false);
  });
  list.addEventListener("keydown", (event) => {
    const all = tabs();
    const index = all.indexOf(document.activeElement);
    if (index < 0) return;
    const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: all.length - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    selectTab(all[(moves[event.key] + all.length) % all.length], "keep");
  });
}

// ---------------------------------------------------------------------------------------------------
// Login

function showLogin() {
  const dialog = $("#login");
  if (dialog.open) return;
  $("#login-error").textContent = "";
  dialog.showModal();
  $("#login-password").focus();
  renderConnection();
}

async function submitLogin(event) {
  event.preventDefault();
  const input = $("#login-password");
  try {
    await api("POST", "/api/session", { password: input.value });
  } catch (error) {
    if (error.status === 403 || error.status === 400) {
      $("#login-error").textContent = error.message || "Wrong password";
      input.select();
    } else {
      report(error);
    }
    return;
  }
  input.value = "";
  $("#login").close();
  refreshAll();
  if (!socket) {
    backoff = 500;
    connect(); // the events may have ended for want of the password too
  }
}

// ---------------------------------------------------------------------------------------------------
// Live: the WebSocket /api/events

const refreshStatus = refresher(async () => {
  applyStatus(await api("GET", "/api/status"));
});

const refreshSearch = () => ($("#search-input").value.trim() ? runSearch() : undefined);

// What each of the daemon's change names makes the page fetch again.
const REFRESH_FOR = {
  player: [refreshStatus],
  mixer: [refreshStatus],
  options: [refreshStatus],
  update: [refreshStatus],
  playlist: [refreshQueue, refreshStatus], // the queue's length and the current position are in Status
  stored_playlist: [refreshPlaylists],
  output: [refreshOutputs],
  database: [refreshLibrary, refreshSearch],
  partition: [refreshStatus, refreshQueue, refreshPlaylists, refreshOutputs],
};

function refreshAll() {
  refreshStatus();
  refreshQueue();
  refreshPlaylists();
  refreshOutputs();
  refreshLibrary();
}

function onChanged(names) {
  const due = new Set();
  for (const name of names) for (const refresh of REFRESH_FOR[name] || []) due.add(refresh);
  for (const refresh of due) refresh();
}

let socket = null;
let connected = false;
let loadedOnce = false;
let backoff = 500;
let reconnectTimer = null;

function eventsUrl() {
  const url = new URL("/api/events", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

function connect() {
  clearTimeout(reconnectTimer);
  reconnectTimer = null;
  const ws = new WebSocket(eventsUrl());
  socket = ws;
  let openedAt = null;
  ws.addEventListener("message", (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    if (openedAt == null) {
      // The subscription stands: load everything now, so no change made before it is missed.
      openedAt = performance.now();
      setConnected(true);
      loadedOnce = true;
      refreshAll();
      return;
    }
    if (message && Array.isArray(message.changed)) onChanged(message.changed);
  });
  ws.addEventListener("close", () => {
    if (socket !== ws) return;
    socket = null;
    setConnected(false);
    // Never left blank: without events the page still shows what it can. A socket refused before
    // its first frame may want a password: asking for the status tells (a 401 opens the login).
    if (!loadedOnce) {
      loadedOnce = true;
      refreshAll();
    } else if (openedAt == null) {
      refreshStatus();
    }
    // The backoff starts again only after a connection that lasted: one the server ends at once
    // (say, for want of permission) is not retried twice a second.
    if (openedAt != null && performance.now() - openedAt > 5000) backoff = 500;
    scheduleReconnect();
  });
}

/** Reconnects after the backoff (0.5 s doubling to 5 s); not while the login waits for a password. */
function scheduleReconnect() {
  if (socket || reconnectTimer || $("#login").open) return;
  reconnectTimer = setTimeout(connect, backoff);
  backoff = Math.min(backoff * 2, 5000);
}

function setConnected(value) {
  connected = value;
  renderConnection();
}

/** The banner says the events are down, except while the login asks for the password they need. */
function renderConnection() {
  const banner = $("#connection");
  const shown = !connected && !$("#login").open;
  const text = shown ? "Connection lost — reconnecting…" : "";
  if (banner.textContent !== text) banner.textContent = text;
  banner.hidden = !shown;
}

// ---------------------------------------------------------------------------------------------------
// Start

function start() {
  bindTransport();
  bindSeek();
  bindVolume();
  bindQueue();
  bindLibrary();
  bindSearch();
  bindTimers();
  bindTabs();
  $("#playlists").addEventListener("click", onPlaylistsClick);
  $("#outputs").addEventListener("change", onOutputChange);
  $("#cover").addEventListener("error", onCoverError);
  $("#login-form").addEventListener("submit", submitLogin);
  $("#login").addEventListener("close", () => {
    renderConnection();
    scheduleReconnect();
  });
  // Back from another tab: the clock slept while hidden.
  document.addEventListener("visibilitychange", () => { if (!document.hidden) redrawClock(); });
  renderModes();
  renderTimerStatus();
  connect();
}

start();
