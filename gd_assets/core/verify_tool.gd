extends SceneTree

# Run by `gd-assets verify` on a scratch copy of a migrated project (never on the copy itself):
# loads every script, scene and resource the listing names, instantiates every scene, and reports
# between marker lines what Godot 4 made of it. The listing (first user argument) has one
# tab-separated request a line:
#   script|scene|resource <TAB> res://path
#   subres <TAB> res://path <TAB> id ("" for a .tres's own [resource]) <TAB> property <TAB> value text (JSON)
#   actions <TAB> name <TAB> name ...   (the input actions project.godot defines)
# _initialize() runs after the autoloads are registered, as in the game.

const MARK := "@@gd-verify"

var _loaded := {}
var _names_of := {}  # object -> its property names (an animation can have thousands)


func _say(parts: Array) -> void:
	printerr(MARK + " " + "\t".join(parts.map(func(p): return str(p))))


func _names(obj: Object) -> Dictionary:
	var out := {}
	for p in obj.get_property_list():
		out[p["name"]] = true
	return out


func _snapshot(obj: Object) -> Dictionary:
	var out := {}
	for p in obj.get_property_list():
		if p["usage"] & PROPERTY_USAGE_STORAGE:
			out[p["name"]] = var_to_str(obj.get(p["name"]))
	return out


# Whether setting `name` to `value` changes anything on a fresh object of `cls`: a name Godot 4 no
# longer lists may still be read by a compatibility setter (Label.align, AnimationPlayer anims/...).
func _takes_effect(cls: String, name: String, value) -> bool:
	if not ClassDB.class_exists(cls) or not ClassDB.can_instantiate(cls):
		return false
	var fresh = ClassDB.instantiate(cls)
	if fresh == null:
		return false
	var before := _snapshot(fresh)
	fresh.set(name, value)
	var changed := _snapshot(fresh) != before
	if fresh is Node:
		fresh.free()
	return changed


func _kept(obj: Object, names: Dictionary, name: String, value, known: bool) -> bool:
	if names.has(name):
		return true
	if known:
		return _takes_effect(obj.get_class(), name, value)
	return false


func _check_scene(path: String, res) -> bool:
	if not (res is PackedScene):
		_say(["NOTSCENE", path, type_string(typeof(res))])
		return false
	var state: SceneState = res.get_state()
	var inst: Node = res.instantiate()
	if inst == null:
		_say(["NOINSTANCE", path])
		return false
	for i in state.get_node_count():
		var np: NodePath = state.get_node_path(i)
		var node: Node = inst.get_node_or_null(np)
		if node == null:
			continue
		var names := _names(node)
		var scripted := false  # the scene gives the node a script, which did not load: its variables are lost
		for j in state.get_node_property_count(i):
			if String(state.get_node_property_name(i, j)) == "script" and node.get_script() == null:
				scripted = true
		for j in state.get_node_property_count(i):
			var pname := String(state.get_node_property_name(i, j))
			if not _kept(node, names, pname, state.get_node_property_value(i, j), true):
				_say(["DROPPED", path, String(np), node.get_class(), pname, "script" if scripted else ""])
	inst.free()
	return true


# The sub-resources a file holds (id -> resource), found through the values of what it loaded; a
# resource of another file (an ext_resource and what it holds) is not this file's and is not entered.
func _embedded(obj, path: String, seen: Dictionary, out: Dictionary) -> void:
	if obj is Resource:
		if seen.has(obj):
			return
		seen[obj] = true
		var own: String = obj.resource_path
		if own != "" and own != path and not own.begins_with(path + "::"):
			return
		if own.begins_with(path + "::"):
			out[own.get_slice("::", 1)] = obj
		for p in obj.get_property_list():
			if p["usage"] & PROPERTY_USAGE_STORAGE:
				_embedded(obj.get(p["name"]), path, seen, out)
	elif obj is Array:
		for v in obj:
			_embedded(v, path, seen, out)
	elif obj is Dictionary:
		for k in obj:
			_embedded(k, path, seen, out)
			_embedded(obj[k], path, seen, out)


func _resources_of(path: String) -> Dictionary:
	# id -> embedded resource of a loaded file ("" -> the file's own resource)
	var res = _loaded.get(path)
	var out := {}
	if res == null:
		return out
	var seen := {}
	if res is PackedScene:
		var state: SceneState = res.get_state()
		for i in state.get_node_count():
			for j in state.get_node_property_count(i):
				_embedded(state.get_node_property_value(i, j), path, seen, out)
	else:
		out[""] = res
		_embedded(res, path, seen, out)
	return out


var _by_file := {}


func _check_subres(path: String, id: String, name: String, value_text: String) -> void:
	if not _loaded.has(path):
		_loaded[path] = ResourceLoader.load(path)
	if _loaded[path] == null:
		return
	if not _by_file.has(path):
		_by_file[path] = _resources_of(path)
	var obj = _by_file[path].get(id)
	if obj == null:
		_say(["NORESOURCE", path, id])
		return
	if not _names_of.has(obj):
		_names_of[obj] = _names(obj)
	if _names_of[obj].has(name):
		return
	var text = JSON.parse_string(value_text)
	var value = str_to_var(text) if text is String else null
	var known: bool = value != null or text == "null"
	if not _kept(obj, _names_of[obj], name, value, known):
		_say(["DROPPED", path, "[%s]" % id, obj.get_class(), name, ""])


func _check_actions(names: PackedStringArray) -> void:
	for action in names:
		if not InputMap.has_action(action):
			_say(["ACTION", action, "missing", "0", "0"])
			continue
		var keys := 0
		var empty := 0
		for event in InputMap.action_get_events(action):
			if event is InputEventKey:
				keys += 1
				if event.keycode == 0 and event.physical_keycode == 0 and event.key_label == 0 and event.unicode == 0:
					empty += 1
		_say(["ACTION", action, "ok", str(keys), str(empty)])


func _initialize() -> void:
	ResourceLoader.set_abort_on_missing_resources(false)
	var args := OS.get_cmdline_user_args()
	var text := FileAccess.get_file_as_string(args[0])
	for line in text.split("\n", false):
		var parts := line.split("\t")
		var kind := parts[0]
		if kind == "actions":
			_check_actions(parts.slice(1))
			continue
		if kind == "subres":
			_check_subres(parts[1], parts[2], parts[3], parts[4])
			continue
		var path := parts[1]
		_say(["BEGIN", kind, path])
		var res = ResourceLoader.load(path)
		_loaded[path] = res
		var ok: bool = res != null
		if ok and kind == "script":
			ok = res is Script
		elif ok and kind == "scene":
			ok = _check_scene(path, res)
		_say(["END", kind, path, "ok" if ok else "fail"])
	_say(["DONE"])
	quit()
