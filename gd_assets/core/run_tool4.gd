extends Node

# Added by `gd-assets verify --run` as the first autoload of a scratch copy (never of the copy itself),
# in Godot 4. The requests file (path in $GD_RUN_REQUESTS) has one tab-separated request a line:
#   mode <TAB> main|scenes    frames <TAB> N    scene_frames <TAB> K    seed <TAB> S    scene <TAB> res://x.tscn
# `main`: the game starts as it would (its main scene, its autoloads) and runs N frames at the fixed
# frame rate the command line sets; then the scene tree is printed and the game ends. `scenes`: the
# main scene is a blank one, and each listed scene is instanced alone for K frames, then freed.
# What this prints goes to stderr between marker lines; what the game prints stays as it is.

const MARK := "@@gd-run"
const SNAPSHOT_EVERY := 60

var _mode := "main"
var _frames := 600
var _scene_frames := 30
var _scenes: Array[String] = []
var _frame := 0
var _index := -1
var _current: Node = null
var _left := 0
var _last_tree: PackedStringArray = []
var _done := false
var _starting := false  # the next scene is on its way (deferred)


func _say(parts: Array) -> void:
	printerr(MARK + " " + "\t".join(parts.map(func(p): return str(p))))


func _init() -> void:
	process_mode = Node.PROCESS_MODE_ALWAYS
	process_priority = -1000000
	var text := FileAccess.get_file_as_string(OS.get_environment("GD_RUN_REQUESTS"))
	var seed_value: String = ""
	for line in text.split("\n", false):
		var parts := line.split("\t")
		match parts[0]:
			"mode": _mode = parts[1]
			"frames": _frames = int(parts[1])
			"scene_frames": _scene_frames = int(parts[1])
			"seed": seed_value = parts[1]
			"scene": _scenes.append(parts[1])
	if seed_value != "":  # no seed asked: the engine's own start
		seed(int(seed_value))
	_say(["BEGIN", _mode])


func _position(node: Node) -> String:
	if node is Node2D:
		return "%d,%d" % [roundi(node.position.x), roundi(node.position.y)]
	if node is Control:
		return "%d,%d" % [roundi(node.position.x), roundi(node.position.y)]
	if node is Node3D:
		return "%.2f,%.2f,%.2f" % [node.position.x, node.position.y, node.position.z]
	return ""


func _visible(node: Node) -> String:
	if node is CanvasItem or node is Node3D:
		return "1" if node.visible else "0"
	return ""


func _walk(node: Node, path: String, out: PackedStringArray) -> void:
	for child in node.get_children():
		if child == self:
			continue
		var own := path + "/" + String(child.name) if path != "" else String(child.name)
		var script = child.get_script()
		var script_path: String = script.resource_path if script != null else ""
		out.append("\t".join(["NODE", own, child.get_class(), script_path, _visible(child), _position(child)]))
		_walk(child, own, out)


func _tree() -> PackedStringArray:
	var out: PackedStringArray = []
	_walk(get_tree().root, "", out)
	return out


func _print_tree(lines: PackedStringArray, frame: int) -> void:
	_say(["TREE", frame, lines.size()])
	for line in lines:
		printerr(MARK + " " + line)


func _process(_delta: float) -> void:
	if _done:
		return
	_frame += 1
	if _mode == "main":
		if _frame % SNAPSHOT_EVERY == 0:
			_last_tree = _tree()
		if _frame >= _frames:
			_done = true
			_print_tree(_tree(), _frame)
			_say(["DONE", _frame])
			get_tree().quit()
		return
	if _starting:
		return
	if _current != null:
		_left -= 1
		if _left > 0:
			return
		if is_instance_valid(_current):
			_current.free()
		_say(["END", "scene", _scenes[_index]])
		_current = null
	# the next scene enters after this frame's processing, as a game's own scene change does: nodes
	# made while the engine is still processing can land where the freed ones were and be skipped
	_starting = true
	_start_next_scene.call_deferred()


func _start_next_scene() -> void:
	_starting = false
	_index += 1
	if _index >= _scenes.size():
		_done = true
		_say(["DONE", _frame])
		get_tree().quit()
		return
	var path := _scenes[_index]
	_say(["BEGIN", "scene", path])
	var packed = ResourceLoader.load(path)
	if packed is PackedScene:
		_current = packed.instantiate()
	if _current == null:
		_say(["END", "scene", path, "fail"])
		return
	get_tree().root.add_child(_current)
	_left = _scene_frames


func _exit_tree() -> void:
	if _done:
		return
	_say(["QUIT", _frame])  # the game ended itself (quit) before its frames were up
	if _mode == "main":
		_print_tree(_last_tree, _frame - _frame % SNAPSHOT_EVERY)
