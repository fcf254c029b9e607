// The chat page of agentmem_nb: conversation list, new conversation, chat with a collapsible tool-call panel under
// each reply (replayed from the stored messages after a reload). Every stored text goes into the page through
// textContent, never innerHTML: a message holding markup is shown as the text it is.
'use strict';

const UNTITLED = '新对话';
const $ = (id) => document.getElementById(id);
const messagesEl = $('messages');
const listEl = $('conversationList');
const titleEl = $('currentTitle');
const statusEl = $('status');
const userEl = $('userId');
const textEl = $('text');
const sendBtn = $('sendBtn');

let currentSessionId = sessionStorage.getItem('agentmem.session') || null;
let conversations = [];

// A token given as /#token=... (a fragment never reaches the server's logs) is kept for this tab only.
(function takeToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (match) {
    sessionStorage.setItem('agentmem.token', decodeURIComponent(match[1]));
    history.replaceState(null, '', window.location.pathname + window.location.search);
  }
})();

function headers(json) {
  const h = {};
  if (json) h['Content-Type'] = 'application/json';
  const token = sessionStorage.getItem('agentmem.token');
  if (token) h['Authorization'] = 'Bearer ' + token;
  return h;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function showStatus(text) { statusEl.textContent = text || ''; }

async function api(path, options = {}) {
  const res = await fetch(path, { ...options, headers: headers(Boolean(options.body)) });
  let data = null;
  try { data = await res.json(); } catch (_) { data = null; }
  if (!res.ok) {
    const detail = data && data.detail;
    throw new Error(typeof detail === 'string' ? detail : `${res.status} ${res.statusText}`);
  }
  return data;
}

function user() { return userEl.value.trim(); }

// ------------------------------------------------------------------------------------------ rendering

function toolPanel(calls) {
  const details = el('details', 'tool-trace');
  const summary = el('summary', '', `工具调用 (${calls.length})`);
  details.appendChild(summary);
  calls.forEach((call, i) => {
    const item = el('div', 'tool-call');
    item.appendChild(el('div', 'tool-name', `${i + 1}. ${call.name || 'tool'}${call.status === 'error' ? ' (error)' : ''}`));
    item.appendChild(el('pre', 'tool-input', `输入: ${call.input || ''}`));
    item.appendChild(el('pre', 'tool-output', `输出: ${call.output || ''}`));
    details.appendChild(item);
  });
  return details;
}

function addUser(text) {
  messagesEl.appendChild(el('div', 'msg u', text));
  messagesEl.scrollTop = messagesEl.scrollHeight;
}

function addAssistant(text, calls, failed) {
  const block = el('div', 'assistant-block');
  const msg = el('div', 'msg a' + (failed ? ' failed' : ''), text);
  block.appendChild(msg);
  if (calls && calls.length) block.appendChild(toolPanel(calls));
  messagesEl.appendChild(block);
  messagesEl.scrollTop = messagesEl.scrollHeight;
  return { block, msg };
}

function renderList() {
  listEl.replaceChildren();
  conversations.forEach((item) => {
    const btn = el('button', 'conv-item' + (item.session_id === currentSessionId ? ' active' : ''),
      item.title || UNTITLED);
    btn.type = 'button';
    btn.title = item.session_id;
    btn.addEventListener('click', () => switchTo(item.session_id, item.title).catch((e) => showStatus(e.message)));
    listEl.appendChild(btn);
  });
}

// ------------------------------------------------------------------------------------------ data

async function loadConversations() {
  const data = await api(`/api/conversations?user_id=${encodeURIComponent(user())}`);
  conversations = data.items || [];
  renderList();
}

async function loadMessages(sessionId) {
  const data = await api(`/api/conversations/${encodeURIComponent(sessionId)}/messages?user_id=${encodeURIComponent(user())}`);
  messagesEl.replaceChildren();
  (data.items || []).forEach((item) => {
    if (item.role === 'assistant') addAssistant(item.content, item.tool_calls || [], false);
    else addUser(item.content);
  });
}

async function switchTo(sessionId, title) {
  currentSessionId = sessionId;
  sessionStorage.setItem('agentmem.session', sessionId);
  titleEl.textContent = title || UNTITLED;
  renderList();
  await loadMessages(sessionId);
}

async function newConversation() {
  const data = await api('/api/conversations', { method: 'POST', body: JSON.stringify({ user_id: user() }) });
  await loadConversations();
  await switchTo(data.session_id, UNTITLED);
}

async function bootstrap() {
  showStatus('');
  await loadConversations();
  const known = conversations.find((c) => c.session_id === currentSessionId);
  if (known) await switchTo(known.session_id, known.title);
  else if (conversations.length) await switchTo(conversations[0].session_id, conversations[0].title);
  else await newConversation();
}

// Reads the server-sent events of /api/chat/stream: tool calls and reply text as they happen, then "done".
async function streamTurn(message, view) {
  const res = await fetch('/api/chat/stream', {
    method: 'POST', headers: headers(true),
    body: JSON.stringify({ user_id: user(), session_id: currentSessionId, message }),
  });
  if (!res.ok) {
    let detail = `${res.status} ${res.statusText}`;
    try { const data = await res.json(); if (typeof data.detail === 'string') detail = data.detail; } catch (_) { /* not JSON */ }
    throw new Error(detail);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let reply = '';
  let result = null;
  const running = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const raw = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = 'message';
      let data = '';
      raw.split('\n').forEach((line) => {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      });
      const payload = data ? JSON.parse(data) : {};
      if (event === 'token') {
        reply += payload.text;
        view.msg.textContent = reply;
      } else if (event === 'tool_started') {
        running.push(payload.tool_call.name);
        reply = '';  // words before a tool call are not part of the reply
        view.msg.textContent = `… ${running.join(', ')}`;
      } else if (event === 'error') {
        showStatus(payload.detail);
      } else if (event === 'done') {
        result = payload;
      }
    }
  }
  return result;
}

document.getElementById('chatForm').addEventListener('submit', async (e) => {
  e.preventDefault();
  const message = textEl.value.trim();
  if (!message) return;
  sendBtn.disabled = true;
  showStatus('');
  try {
    if (!currentSessionId) await newConversation();
    textEl.value = '';
    addUser(message);
    const view = addAssistant('…', [], false);
    const result = await streamTurn(message, view);
    view.block.remove();
    if (result) {
      addAssistant(result.reply, result.tool_calls || [], Boolean(result.error));
      titleEl.textContent = result.title || UNTITLED;
    }
    await loadConversations();
  } catch (err) {
    showStatus(err.message);
  } finally {
    sendBtn.disabled = false;
    textEl.focus();
  }
});

$('newConversationBtn').addEventListener('click', () => newConversation().catch((e) => showStatus(e.message)));
userEl.addEventListener('change', () => {
  currentSessionId = null;
  sessionStorage.removeItem('agentmem.session');
  bootstrap().catch((e) => showStatus(e.message));
});

bootstrap().catch((e) => showStatus(e.message));
